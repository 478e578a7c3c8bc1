#!/usr/bin/python3
"""The full simulation study of Figures 3, 4, 8, 9 against its bound kernel, side by side in one run.

docs/performance.md "Target: the study against its bound kernel". For each instruction-set cap
(DPMU_SIMD, engine/core/include/dpmu/core/cpu_features.hpp), in turn and repeatedly:
  1. the bound kernel: build/bench/dpmu_bench_ssp's bm_bound_kernel (p/2 xoshiro256++ words per row
     and the exact Gram kernel of [1 x], full blocks), rows per CPU-second for p = 2, 6, 9 (median
     of 5 repetitions), just before and just after the runs of each config, averaged;
  2. two short runs of the config (`dpmu run CONFIG --replicates R`, user + system CPU seconds from
     /usr/bin/time), giving a fixed cost a and a cost b per replicate (all 72 data keys and their
     method cells), so that the full size costs a + b * replicates;
  3. the bound of one replicate: the sum over the config's data keys of n / rate(p), and the ratios
     full / (replicates * bound) and b / bound (the fixed calibration excluded).
CPU seconds, so that the ratio is of work, not of wall time on a shared machine.

Usage: bench/ssp_study_ratio.py [--build build] [--config configs/fig3_4_zellner_siow.yaml ...]
                                [--replicates 2 6] [--caps avx2 native] [--repeat 2] [--threads 2]
Several configs are measured in turn within each repeat and cap (side by side).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import yaml


def bound_rates(build, cap, min_time):
    env = dict(os.environ, DPMU_SIMD=cap)
    out = subprocess.run([os.path.join(build, "bench", "dpmu_bench_ssp"), "--benchmark_filter=bm_bound_kernel",
                          f"--benchmark_min_time={min_time}", "--benchmark_repetitions=5",
                          "--benchmark_report_aggregates_only=true", "--benchmark_format=json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    rates, labels = {}, set()
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        p = int(b["name"].split("/")[1].split("_")[0])
        rates[p] = b["rows_per_second"]
        labels.add(b.get("label", ""))
    return rates, ",".join(sorted(labels))


def run_cpu(build, config, replicates, threads, cap):
    env = dict(os.environ, DPMU_SIMD=cap)
    with tempfile.TemporaryDirectory() as tmp:
        timing = os.path.join(tmp, "time.txt")
        subprocess.run(["/usr/bin/time", "-f", "%U %S %e", "-o", timing, os.path.join(build, "engine", "dpmu"),
                        "run", config, "--replicates", str(replicates), "--threads", str(threads), "--quiet",
                        "--out", os.path.join(tmp, "out.h5")], env=env, check=True, stdout=subprocess.DEVNULL)
        user, system, wall = (float(x) for x in open(timing).read().split()[-3:])
    return user + system, wall


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
    ap.add_argument("--replicates", type=int, nargs=2, default=[2, 6])
    ap.add_argument("--caps", nargs="+", default=["avx2", "native"])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", default="0.2")
    a = ap.parse_args()
    r1, r2 = a.replicates
    for config in a.config:
        print(f"config {config}: {len(data_keys(config))} data keys, "
              f"{int(yaml.safe_load(open(config))['replicates'])} replicates at full size; short runs {r1} and {r2}")
    print(f"load before: {os.getloadavg()}")
    for rep in range(a.repeat):
        for cap in a.caps:
            print(f"[{rep + 1}] DPMU_SIMD={cap}")
            for config in a.config:
                full = int(yaml.safe_load(open(config))["replicates"])
                # the bound kernel (median of 5) just before and just after the two runs, averaged
                before, label = bound_rates(a.build, cap, a.min_time)
                c1, w1 = run_cpu(a.build, config, r1, a.threads, cap)
                c2, w2 = run_cpu(a.build, config, r2, a.threads, cap)
                after, _ = bound_rates(a.build, cap, a.min_time)
                # CPU-s per replicate of all data keys
                bound = sum(0.5 * (n / before[p] + n / after[p]) for p, n in data_keys(config))
                rate_txt = ", ".join(f"p={p}: {before[p] / 1e6:.0f}/{after[p] / 1e6:.0f}" for p in sorted(before))
                print(f"    bound kernel ({label}) before/after the runs, M rows/s: {rate_txt}")
                b = (c2 - c1) / (r2 - r1)
                fixed = c1 - b * r1
                projected = fixed + b * full
                print(f"    {os.path.basename(config)}: {r1} replicates {c1:.1f} CPU-s ({w1:.1f} s wall), {r2}: "
                      f"{c2:.1f} CPU-s ({w2:.1f} s wall) -> fixed {fixed:.1f} CPU-s, {b:.3f} CPU-s/replicate; "
                      f"bound {bound:.3f} CPU-s/replicate")
                print(f"      projected full size {projected:.0f} CPU-s against bound {bound * full:.0f} CPU-s: "
                      f"ratio {projected / (bound * full):.3f} (per replicate, fixed excluded: {b / bound:.3f})  "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
