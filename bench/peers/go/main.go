// SPDX-License-Identifier: Apache-2.0 OR MIT

// Command peer runs the workloads of bench/native.c, bench/storage.c and
// bench/network.c's echo server the way a Go program would write them
// (goroutines, channels, a WaitGroup, time.Sleep, net and os), so that
// `make bench` can set cwrt's native backend beside Go's runtime in the
// same run. It prints one "peer go ..." row per workload in the key=value
// form bench/summary.py reads.
//
// Usage:
//
//	peer spawn|pingpong|timers|sleepers|echo
//	peer write DIR SIZE COUNT SYNC_EVERY
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

const (
	spawns        = 50000
	pings         = 200000
	timerTasks    = 100
	sleepsPerTask = 100
	sleepers      = 100000
)

// spawnJoin: one goroutine at a time, started and waited for.
func spawnJoin() {
	start := time.Now()
	for i := 0; i < spawns; i++ {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { wg.Done() }()
		wg.Wait()
	}
	fmt.Printf("peer go spawn: ns=%.0f\n", float64(time.Since(start).Nanoseconds())/spawns)
}

// pingPong: a value back and forth through two channels of capacity 1,
// as bench/native.c's cw_chan pair.
func pingPong() {
	to, from := make(chan int, 1), make(chan int, 1)
	done := make(chan struct{})
	go func() {
		for v := range to {
			from <- v
		}
		close(done)
	}()
	start := time.Now()
	for i := 0; i < pings; i++ {
		to <- i
		<-from
	}
	close(to)
	<-done
	fmt.Printf("peer go pingpong: ns=%.0f\n", float64(time.Since(start).Nanoseconds())/pings)
}

// timers: 100 goroutines each sleeping 1 ms a hundred times; the lateness
// of each wake-up past its deadline.
func timers() {
	late := make([]float64, timerTasks*sleepsPerTask)
	var wg sync.WaitGroup
	for t := 0; t < timerTasks; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			for i := 0; i < sleepsPerTask; i++ {
				target := time.Now().Add(time.Millisecond)
				time.Sleep(time.Millisecond)
				late[t*sleepsPerTask+i] = float64(time.Since(target).Nanoseconds())
			}
		}(t)
	}
	wg.Wait()
	sort.Float64s(late)
	n := len(late)
	fmt.Printf("peer go timers: sleeps=%d late_p50_us=%.1f late_p99_us=%.1f late_max_us=%.1f\n",
		n, late[n/2]/1e3, late[n*99/100]/1e3, late[n-1]/1e3)
}

// maxRSS is the process's peak resident set, in bytes.
func maxRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		fail("getrusage", err)
	}
	return float64(ru.Maxrss) * 1024
}

// sleeping: 100,000 goroutines asleep for a second at once; the peak RSS
// they add, per goroutine.
func sleeping() {
	base := maxRSS()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(sleepers)
	for i := 0; i < sleepers; i++ {
		go func() {
			defer wg.Done()
			time.Sleep(time.Second)
		}()
	}
	wg.Wait()
	peak := maxRSS()
	fmt.Printf("peer go sleepers: tasks=%d wall_s=%.2f peak_rss_mib=%.0f bytes_per_task=%.0f\n",
		sleepers, time.Since(start).Seconds(), peak/(1<<20), (peak-base)/sleepers)
}

// writeLoad writes count blocks of size bytes to a new file in dir, with
// an fsync (os.File.Sync) every syncEvery: microseconds per write.
func writeLoad(dir string, size, count, syncEvery int) float64 {
	path := filepath.Join(dir, "go-peer")
	f, err := os.Create(path)
	if err != nil {
		fail("create", err)
	}
	block := make([]byte, size)
	for i := range block {
		block[i] = 0x5A
	}
	start := time.Now()
	for i := 0; i < count; i++ {
		if _, err := f.Write(block); err != nil {
			fail("write", err)
		}
		if (i+1)%syncEvery == 0 {
			if err := f.Sync(); err != nil {
				fail("sync", err)
			}
		}
	}
	us := float64(time.Since(start).Nanoseconds()) / 1e3 / float64(count)
	if err := f.Close(); err != nil {
		fail("close", err)
	}
	if err := os.Remove(path); err != nil {
		fail("remove", err)
	}
	return us
}

// writes: one run of bench/storage.c's synced writes with the sizes it
// asks for (storage.c runs it between its own, best of a few).
func writes(args []string) {
	var n [3]int
	for i, a := range args[1:] {
		v, err := strconv.Atoi(a)
		if err != nil || v <= 0 {
			fail("write", fmt.Errorf("not a positive count: %q", a))
		}
		n[i] = v
	}
	fmt.Printf("peer go write: us=%.2f\n", writeLoad(args[0], n[0], n[1], n[2]))
}

// echo serves TCP echo on a port of 127.0.0.1 the kernel picks, printed as
// "port N", until killed: a goroutine per connection, as net's own
// example writes it.
func echo() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail("listen", err)
	}
	fmt.Printf("port %d\n", l.Addr().(*net.TCPAddr).Port)
	for {
		c, err := l.Accept()
		if err != nil {
			fail("accept", err)
		}
		go func(c net.Conn) {
			// The client ends each connection, by a close or a reset:
			// either way the copy is over, and nothing waits for why.
			_, _ = io.Copy(c, c)
			_ = c.Close()
		}(c)
	}
}

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "go peer: %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peer spawn|pingpong|timers|sleepers|echo | peer write DIR SIZE COUNT SYNC_EVERY")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "spawn":
		spawnJoin()
	case "pingpong":
		pingPong()
	case "timers":
		timers()
	case "sleepers":
		sleeping()
	case "echo":
		echo()
	case "write":
		if len(os.Args) != 6 {
			fmt.Fprintln(os.Stderr, "usage: peer write DIR SIZE COUNT SYNC_EVERY")
			os.Exit(2)
		}
		writes(os.Args[2:])
	default:
		fmt.Fprintf(os.Stderr, "go peer: unknown workload %q\n", os.Args[1])
		os.Exit(2)
	}
}
