#!/usr/bin/python3
"""The full simulation study of Figures 3, 4, 8, 9 against its bound kernel, side by side in one run.

docs/performance.md "Target: the study against its bound kernel". For each instruction-set cap
(DPMU_SIMD, engine/core/include/dpmu/core/cpu_features.hpp) and config, in turn and repeatedly:
  1. the bound kernel: build/bench/dpmu_bench_ssp's bm_bound_kernel (p/2 xoshiro256++ words per row
     and the exact Gram kernel of [1 x], full blocks), rows per CPU-second for p = 2, 6, 9 (mean CPU
     time of 5 repetitions of --min-time CPU-s), just before and just after the run of the config,
     averaged;
  2. one short run of the config (`dpmu run CONFIG --replicates R`). Its summary line gives the
     CPU seconds of the run's loop and, apart, of the cells' set-up (prepare(): calibration, a
     fixed cost per cell; runtime::RunReport::prepare_cpu_seconds), so the CPU cost of one
     replicate of all 72 data keys and their method cells is b = (loop − set-up) / R, and the
     fixed cost a = total − R b (/usr/bin/time, user + system);
  3. the bound of one replicate: the sum over the config's data keys of n / rate(p), and the ratios
     (a + b * replicates) / (replicates * bound) (the full size projected) and b / bound.
CPU seconds, so that the ratio is of work, not of wall time on a shared machine. The machine's
speed drifts by up to ±20 % from one minute to the next (other tenants), so every repeat gives a
ratio and the summary is their median and range per (cap, config); --replicates-pair R1 R2 gives
the older estimate of b from the difference of two runs instead.

Usage: bench/ssp_study_ratio.py [--build build] [--config configs/fig3_4_zellner_siow.yaml ...]
                                [--replicates 10] [--caps avx2 native] [--repeat 5] [--threads 2]
Several configs are measured in turn within each repeat and cap (side by side).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import yaml

BLOCK_ROWS = 256  # rows per iteration of bm_bound_kernel (one full block of the exact kernel)


def bound_rates(build, cap, min_time):
    """Rows per CPU-second of bm_bound_kernel for p = 2, 6, 9: 5 repetitions of at least min_time
    CPU-seconds each, their mean CPU time per block (a time average, like the study's CPU seconds;
    a median of rates would pick the machine's typical speed instead of its average)."""
    env = dict(os.environ, DPMU_SIMD=cap)
    out = subprocess.run([os.path.join(build, "bench", "dpmu_bench_ssp"), "--benchmark_filter=bm_bound_kernel",
                          f"--benchmark_min_time={min_time}", "--benchmark_repetitions=5",
                          "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    rates, labels = {}, set()
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "mean":
            continue
        p = int(b["name"].split("/")[1].split("_")[0])
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
        rates[p] = BLOCK_ROWS / (b["cpu_time"] * scale)
        labels.add(b.get("label", ""))
    return rates, ",".join(sorted(labels))


def run_cpu(build, config, replicates, threads, cap):
    """(total CPU-s, wall s, loop CPU-s, set-up CPU-s) of `dpmu run CONFIG --replicates R`."""
    env = dict(os.environ, DPMU_SIMD=cap)
    with tempfile.TemporaryDirectory() as tmp:
        timing = os.path.join(tmp, "time.txt")
        err = subprocess.run(["/usr/bin/time", "-f", "%U %S %e", "-o", timing,
                              os.path.join(build, "engine", "dpmu"), "run", config, "--replicates", str(replicates),
                              "--threads", str(threads), "--out", os.path.join(tmp, "out.h5")],
                             env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
        user, system, wall = (float(x) for x in open(timing).read().split()[-3:])
    m = re.search(r"\(CPU ([0-9.]+) s, of which ([0-9.]+) s in the cells' set-up\)", err)
    if not m:
        sys.exit(f"ssp_study_ratio: no CPU summary in the output of dpmu run {config}:\n{err[-2000:]}")
    return user + system, wall, float(m.group(1)), float(m.group(2))


def data_keys(config):
    """(p, n) of every data key of the config (a data set per (p, |T|, n)); n scaled by n_scale."""
    c = yaml.safe_load(open(config))
    scale = float(c.get("parameters", {}).get("n_scale", 1.0))
    keys = set()
    for g in c["grid"]:
        z = g.get("zip", {})
        ps, ts = z.get("p", [g.get("p")]), z.get("true_model_size", [g.get("true_model_size")])
        ns = g["n"] if isinstance(g["n"], list) else [g["n"]]
        for p, t in zip(ps, ts):
            for n in ns:
                keys.add((int(p), int(t), round(int(n) * scale)))
    return [(p, n) for p, _, n in sorted(keys)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--config", nargs="+", default=["configs/fig3_4_zellner_siow.yaml"])
    ap.add_argument("--replicates", type=int, default=10, help="replicates of the short run (default 10)")
    ap.add_argument("--replicates-pair", type=int, nargs=2, metavar=("R1", "R2"),
                    help="estimate b from two runs, (cpu(R2) - cpu(R1)) / (R2 - R1), instead of the set-up split")
    ap.add_argument("--caps", nargs="+", default=["avx2", "native"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", default="0.5", help="CPU-s per repetition of the bound kernel (default 0.5)")
    a = ap.parse_args()
    if a.replicates < 1 or (a.replicates_pair and not 0 < a.replicates_pair[0] < a.replicates_pair[1]):
        sys.exit("ssp_study_ratio: --replicates must be >= 1 and --replicates-pair R1 R2 must have 0 < R1 < R2")
    for config in a.config:
        short = (f"two runs of {a.replicates_pair[0]} and {a.replicates_pair[1]}" if a.replicates_pair else
                 f"one run of {a.replicates}")
        print(f"config {config}: {len(data_keys(config))} data keys, "
              f"{int(yaml.safe_load(open(config))['replicates'])} replicates at full size; short: {short}")
    print(f"load before: {os.getloadavg()}", flush=True)
    ratios = {}
    for rep in range(a.repeat):
        for cap in a.caps:
            print(f"[{rep + 1}] DPMU_SIMD={cap}")
            for config in a.config:
                full = int(yaml.safe_load(open(config))["replicates"])
                # the bound kernel (mean of 5) just before and just after the run(s), averaged
                before, label = bound_rates(a.build, cap, a.min_time)
                if a.replicates_pair:
                    r1, r2 = a.replicates_pair
                    c1, w1, _, _ = run_cpu(a.build, config, r1, a.threads, cap)
                    c2, w2, _, _ = run_cpu(a.build, config, r2, a.threads, cap)
                    b = (c2 - c1) / (r2 - r1)
                    fixed = c1 - b * r1
                    runs = f"{r1} replicates {c1:.1f} CPU-s ({w1:.1f} s wall), {r2}: {c2:.1f} CPU-s ({w2:.1f} s wall)"
                else:
                    total, wall, loop, setup = run_cpu(a.build, config, a.replicates, a.threads, cap)
                    b = (loop - setup) / a.replicates
                    fixed = total - b * a.replicates
                    runs = (f"{a.replicates} replicates {total:.1f} CPU-s ({wall:.1f} s wall; loop {loop:.1f}, "
                            f"of which set-up {setup:.1f})")
                after, _ = bound_rates(a.build, cap, a.min_time)
                # CPU-s per replicate of all data keys
                bound = sum(0.5 * (n / before[p] + n / after[p]) for p, n in data_keys(config))
                rate_txt = ", ".join(f"p={p}: {before[p] / 1e6:.0f}/{after[p] / 1e6:.0f}" for p in sorted(before))
                print(f"    bound kernel ({label}) before/after the run, M rows/s: {rate_txt}")
                projected = fixed + b * full
                ratio = projected / (bound * full)
                ratios.setdefault((cap, os.path.basename(config)), []).append(ratio)
                print(f"    {os.path.basename(config)}: {runs} -> fixed {fixed:.1f} CPU-s, {b:.3f} CPU-s/replicate; "
                      f"bound {bound:.3f} CPU-s/replicate")
                print(f"      projected full size {projected:.0f} CPU-s against bound {bound * full:.0f} CPU-s: "
                      f"ratio {ratio:.3f} (per replicate, fixed excluded: {b / bound:.3f})  "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
    print("summary (projected full size / bound): median [min, max] over repeats")
    for (cap, config), rs in ratios.items():
        print(f"  {cap:7s} {config}: {statistics.median(rs):.3f} [{min(rs):.3f}, {max(rs):.3f}]  "
              f"({len(rs)} repeats: {', '.join(f'{r:.3f}' for r in rs)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
