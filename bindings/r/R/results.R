# Results files of `dpmu run` as tidy data frames (docs/results-schema.md, "Tidy tables"). The table
# is the one `dpmu export` writes (one implementation of the summaries, dpmu/runtime/tidy.hpp): a
# results file is made by the `dpmu` command, which reads it back here, so the package itself needs
# no HDF5.

#' The `dpmu` command: option dpmu.exe, else the environment variable DPMU (or DPMU_EXE), else
#' `dpmu` on the PATH.
#' @noRd
dpmu_command <- function(caller) {
  exe <- getOption("dpmu.exe", "")
  if (!nzchar(exe)) exe <- Sys.getenv("DPMU", Sys.getenv("DPMU_EXE", ""))
  if (!nzchar(exe)) exe <- Sys.which("dpmu")[[1]]
  if (!nzchar(exe) || !file.exists(exe)) {
    stop(caller, ": results files are read by the dpmu command (`dpmu export`), which was not found: build it ",
         "(bash scripts/build.sh in dpmu's repository) and set options(dpmu.exe = \"/path/to/dpmu\") or the ",
         "environment variable DPMU", call. = FALSE)
  }
  exe
}

#' `dpmu export ARGS` as a data frame (the CSV's types: strings stay strings, NA is missing).
#' @noRd
dpmu_export <- function(args, caller) {
  exe <- dpmu_command(caller)
  err <- tempfile()
  on.exit(unlink(err))
  out <- suppressWarnings(system2(exe, c("export", args), stdout = TRUE, stderr = err))
  status <- attr(out, "status")
  if (!is.null(status) && status != 0) {
    stop(caller, ": ", paste(readLines(err, warn = FALSE), collapse = "\n"), call. = FALSE)
  }
  utils::read.csv(text = paste(out, collapse = "\n"), stringsAsFactors = FALSE, na.strings = "NA",
                  colClasses = c(cell_key = "character", component_label = "character", metric = "character"),
                  check.names = FALSE, encoding = "UTF-8")
}

#' Summaries of a results file: one row per cell x metric x component.
#'
#' See man/read_results.Rd.
#' @export
read_results <- function(path) {
  path <- path.expand(path)
  if (!file.exists(path)) stop("dpmu::read_results: no file '", path, "'", call. = FALSE)
  t <- dpmu_export(shQuote(path), "dpmu::read_results")
  t$component_label[is.na(t$component_label)] <- ""
  t
}

#' Replicate values of one metric (all metrics when metric = ""): one row per cell x replicate x component.
#'
#' See man/read_replicates.Rd.
#' @export
read_replicates <- function(path, metric = "") {
  path <- path.expand(path)
  if (!file.exists(path)) stop("dpmu::read_replicates: no file '", path, "'", call. = FALSE)
  args <- c(shQuote(path), "--replicates", if (nzchar(metric)) c("--metric", shQuote(metric)))
  t <- dpmu_export(args, "dpmu::read_replicates")
  t$component_label[is.na(t$component_label)] <- ""
  t
}
