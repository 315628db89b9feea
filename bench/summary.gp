# SPDX-License-Identifier: Apache-2.0 OR MIT
# The picture `make bench` draws of the peer table: a bar for each ratio of
# cwrt's native backend against its best peer (bench/summary.py --chart
# writes the data), a line at 1 (even), and each target as a mark. The
# ratios span orders of magnitude (memory per task against a libuv timer,
# echo against an even server), so the axis is logarithmic when summary.py's
# data spans more than a factor of 20.
#   gnuplot -e "data='DATA'; out='SVG'" bench/summary.gp
if (!exists("data") || !exists("out")) {
    print "usage: gnuplot -e \"data='DATA'; out='SVG'\" summary.gp"
    exit status 2
}
stats data using 2 nooutput
set terminal svg size 1000,600 dynamic font "sans,11"
set output out
set title "cwrt native against its best peer (Go, tokio, libuv), same run: above 1, cwrt ahead"
set ylabel "best peer / cwrt"
if (STATS_max / STATS_min > 20) { set logscale y 10 }
set style fill solid 0.8 border -1
set boxwidth 0.7
set xtics rotate by -40 left noenhanced font ",9"
set bmargin 12
set rmargin 10
set key top right
set grid ytics
set xrange [-0.6:STATS_records - 0.4]
plot data using 0:2:($2 >= 1 ? 0x2e8b57 : 0xcd5c5c):xtic(1) with boxes lc rgb variable notitle, \
     1 with lines lc rgb "black" dt 2 title "even", \
     data using 0:3 with points pt 7 ps 1.2 lc rgb "navy" title "target"
