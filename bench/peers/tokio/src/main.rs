// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The workloads of bench/native.c, bench/storage.c and bench/network.c's
//! echo server the way a tokio program would write them (`tokio::spawn`,
//! `mpsc`, `time::sleep`, `TcpListener`, `fs::File`), on the default
//! multi-thread runtime, so that `make bench` can set cwrt's native
//! backend beside tokio in the same run. Each workload runs in a task of
//! the runtime, as cwrt's root task does, and prints one "peer tokio ..."
//! row in the key=value form bench/summary.py reads.
//!
//! usage: peer spawn|pingpong|timers|sleepers|echo
//!        peer write DIR SIZE COUNT SYNC_EVERY

use std::path::Path;
use std::process::exit;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const SPAWNS: u32 = 50_000;
const PINGS: u32 = 200_000;
const TIMER_TASKS: usize = 100;
const SLEEPS_PER_TASK: usize = 100;
const SLEEPERS: usize = 100_000;

fn fail(what: &str, err: impl std::fmt::Display) -> ! {
    eprintln!("tokio peer: {what}: {err}");
    exit(1)
}

fn ns_per(start: Instant, n: u32) -> f64 {
    start.elapsed().as_nanos() as f64 / f64::from(n)
}

/// One empty task at a time, spawned and awaited.
async fn spawn_join() {
    let start = Instant::now();
    for _ in 0..SPAWNS {
        tokio::spawn(async {})
            .await
            .unwrap_or_else(|e| fail("join", e));
    }
    println!("peer tokio spawn: ns={:.0}", ns_per(start, SPAWNS));
}

/// A value back and forth through two channels of capacity 1, as
/// bench/native.c's cw_chan pair.
async fn ping_pong() {
    let (to_tx, mut to_rx) = mpsc::channel::<u32>(1);
    let (from_tx, mut from_rx) = mpsc::channel::<u32>(1);
    let pong = tokio::spawn(async move {
        while let Some(v) = to_rx.recv().await {
            if from_tx.send(v).await.is_err() {
                break;
            }
        }
    });
    let start = Instant::now();
    for i in 0..PINGS {
        to_tx.send(i).await.unwrap_or_else(|e| fail("send", e));
        from_rx
            .recv()
            .await
            .unwrap_or_else(|| fail("recv", "closed"));
    }
    drop(to_tx);
    pong.await.unwrap_or_else(|e| fail("join", e));
    println!("peer tokio pingpong: ns={:.0}", ns_per(start, PINGS));
}

/// 100 tasks each sleeping 1 ms a hundred times: how late each wake-up is.
async fn timers() {
    let tasks: Vec<_> = (0..TIMER_TASKS)
        .map(|_| {
            tokio::spawn(async {
                let mut late = Vec::with_capacity(SLEEPS_PER_TASK);
                for _ in 0..SLEEPS_PER_TASK {
                    let target = Instant::now() + Duration::from_millis(1);
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    late.push(target.elapsed().as_nanos() as f64);
                }
                late
            })
        })
        .collect();
    let mut late = Vec::with_capacity(TIMER_TASKS * SLEEPS_PER_TASK);
    for t in tasks {
        late.extend(t.await.unwrap_or_else(|e| fail("join", e)));
    }
    late.sort_by(f64::total_cmp);
    let n = late.len();
    println!(
        "peer tokio timers: sleeps={n} late_p50_us={:.1} late_p99_us={:.1} late_max_us={:.1}",
        late[n / 2] / 1e3,
        late[n * 99 / 100] / 1e3,
        late[n - 1] / 1e3
    );
}

/// The process's peak resident set in bytes (VmHWM, what getrusage's
/// ru_maxrss reports).
fn peak_rss() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_else(|e| fail("status", e));
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or_else(|| fail("status", "no VmHWM"));
    kib * 1024.0
}

/// 100,000 tasks asleep for a second at once: the peak RSS they add, per task.
async fn sleepers() {
    let base = peak_rss();
    let start = Instant::now();
    let tasks: Vec<_> = (0..SLEEPERS)
        .map(|_| tokio::spawn(tokio::time::sleep(Duration::from_secs(1))))
        .collect();
    for t in tasks {
        t.await.unwrap_or_else(|e| fail("join", e));
    }
    let peak = peak_rss();
    println!(
        "peer tokio sleepers: tasks={SLEEPERS} wall_s={:.2} peak_rss_mib={:.0} bytes_per_task={:.0}",
        start.elapsed().as_secs_f64(),
        peak / f64::from(1 << 20),
        (peak - base) / SLEEPERS as f64
    );
}

/// `count` blocks of `size` bytes written to a new file in `dir`, with a
/// `sync_data` every `sync_every`: microseconds per write.
async fn write_load(dir: &Path, size: usize, count: usize, sync_every: usize) -> f64 {
    let path = dir.join("tokio-peer");
    let mut f = tokio::fs::File::create(&path)
        .await
        .unwrap_or_else(|e| fail("create", e));
    let block = vec![0x5Au8; size];
    let start = Instant::now();
    for i in 0..count {
        f.write_all(&block)
            .await
            .unwrap_or_else(|e| fail("write", e));
        if (i + 1) % sync_every == 0 {
            f.sync_data().await.unwrap_or_else(|e| fail("sync_data", e));
        }
    }
    let us = start.elapsed().as_nanos() as f64 / 1e3 / count as f64;
    drop(f);
    tokio::fs::remove_file(&path)
        .await
        .unwrap_or_else(|e| fail("remove", e));
    us
}

/// One run of bench/storage.c's synced writes with the sizes it asks for
/// (storage.c runs it between its own, best of a few).
async fn writes(args: Vec<String>) {
    let n: Vec<usize> = args[1..]
        .iter()
        .map(|a| match a.parse::<usize>() {
            Ok(v) if v > 0 => v,
            _ => fail("write", format!("not a positive count: {a:?}")),
        })
        .collect();
    let us = write_load(Path::new(&args[0]), n[0], n[1], n[2]).await;
    println!("peer tokio write: us={us:.2}");
}

/// One connection: read what arrives and write it back, until the client
/// ends it.
async fn echo_conn(mut s: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return, // the client closed or reset it: done
            Ok(n) => {
                if s.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// TCP echo on a port of 127.0.0.1 the kernel picks, printed as "port N",
/// until killed: a task per connection.
async fn echo() {
    let l = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| fail("bind", e));
    let port = l
        .local_addr()
        .unwrap_or_else(|e| fail("local_addr", e))
        .port();
    println!("port {port}");
    loop {
        let (s, _) = l.accept().await.unwrap_or_else(|e| fail("accept", e));
        s.set_nodelay(true).unwrap_or_else(|e| fail("nodelay", e));
        tokio::spawn(echo_conn(s));
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let work = match (args.get(1).map(String::as_str), args.len()) {
        (Some("spawn"), 2) => tokio::spawn(spawn_join()),
        (Some("pingpong"), 2) => tokio::spawn(ping_pong()),
        (Some("timers"), 2) => tokio::spawn(timers()),
        (Some("sleepers"), 2) => tokio::spawn(sleepers()),
        (Some("echo"), 2) => tokio::spawn(echo()),
        (Some("write"), 6) => tokio::spawn(writes(args[2..].to_vec())),
        _ => {
            eprintln!("usage: peer spawn|pingpong|timers|sleepers|echo | peer write DIR SIZE COUNT SYNC_EVERY");
            exit(2)
        }
    };
    work.await.unwrap_or_else(|e| fail("workload", e));
}
