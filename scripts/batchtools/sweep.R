# Run a dpmu study as N shards with R's batchtools, then merge them: the R counterpart of
# scripts/slurm/sweep.sbatch. The cluster is whatever batchtools is configured for
# (batchtools.conf.R, e.g. cluster.functions = makeClusterFunctionsSlurm("slurm-simple"));
# without a configuration batchtools runs the shards one after another in this R session.
#
# Usage: Rscript scripts/batchtools/sweep.R CONFIG.yaml OUT.h5 N [REGISTRY_DIR]
#   dpmu is $DPMU, else `dpmu` on PATH. Shard i writes OUT.shard-i-of-N.h5; an interrupted shard
#   (a time-out, a killed job) resumes from its checkpoint when the script is run again, and
#   finished shards are not redone; the numbers equal one `dpmu run` (tests/e2e/batchtools_test.sh).
suppressPackageStartupMessages(library(batchtools))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) stop("usage: Rscript sweep.R CONFIG.yaml OUT.h5 N [REGISTRY_DIR]")
config <- normalizePath(args[1], mustWork = TRUE)
out <- file.path(normalizePath(dirname(args[2]), mustWork = TRUE), basename(args[2]))
n <- as.integer(args[3])
registry <- if (length(args) >= 4) args[4] else paste0(sub("\\.h5$", "", out), ".batchtools")
dpmu <- Sys.getenv("DPMU", unname(Sys.which("dpmu")))
if (!nzchar(dpmu)) stop("dpmu not found: set DPMU or put dpmu on PATH")
dpmu <- normalizePath(dpmu, mustWork = TRUE)  # the jobs may run elsewhere
shard_file <- function(i) sprintf("%s.shard-%d-of-%d.h5", sub("\\.h5$", "", out), i, n)

# dpmu validates the study before anything is submitted (as the SLURM wrapper does)
if (system2(dpmu, c("run", config, "--dry-run"), stdout = FALSE) != 0) stop("dpmu run --dry-run failed")

run_shard <- function(i, n, config, file, dpmu) {
  # --resume continues from the checkpoint of an interrupted job (and leaves a complete file as it is)
  resume <- if (file.exists(file) || file.exists(paste0(file, ".journal"))) "--resume" else character()
  status <- system2(dpmu, c("run", config, "--out", file, "--shard", sprintf("%d/%d", i, n), "--quiet", resume))
  if (status != 0) stop(sprintf("dpmu run --shard %d/%d exited with status %d", i, n, status))
  file
}

reg <- if (dir.exists(registry)) loadRegistry(registry, writeable = TRUE) else makeRegistry(registry, seed = 1)
if (nrow(findJobs(reg = reg)) == 0) {
  batchMap(run_shard, i = seq_len(n) - 1L, more.args = list(n = n, config = config, dpmu = dpmu),
           file = vapply(seq_len(n) - 1L, shard_file, ""), reg = reg)
}
todo <- findNotDone(reg = reg)  # never run, failed or expired: resubmitted (they resume)
if (nrow(todo) > 0) submitJobs(todo, reg = reg)
if (!waitForJobs(reg = reg)) {
  print(getErrorMessages(reg = reg))
  stop("some shards failed; fix the cause and run this script again (finished shards are kept)")
}
if (file.exists(out)) stop(out, " exists; remove it to merge again")
if (system2(dpmu, c("merge", out, vapply(seq_len(n) - 1L, shard_file, ""))) != 0) stop("dpmu merge failed")
cat("merged", n, "shards into", out, "\n")
