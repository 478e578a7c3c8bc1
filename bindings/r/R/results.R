# Results files of `dpmu run` as tidy data frames (docs/results-schema.md, "Tidy tables"). The
# table is built by dpmu's C++ reader (dpmu/runtime/tidy.hpp), the one `dpmu export` uses.

#' Summaries of a results file: one row per cell x metric x component.
#'
#' See man/read_results.Rd.
#' @export
read_results <- function(path) {
  path <- path.expand(path)
  if (!file.exists(path)) stop("dpmu::read_results: no file '", path, "'", call. = FALSE)
  .Call(dpmu_read_results_c, path)
}

#' Replicate values of one metric (all metrics when metric = ""): one row per cell x replicate x component.
#'
#' See man/read_replicates.Rd.
#' @export
read_replicates <- function(path, metric = "") {
  path <- path.expand(path)
  if (!file.exists(path)) stop("dpmu::read_replicates: no file '", path, "'", call. = FALSE)
  .Call(dpmu_read_replicates_c, path, as.character(metric))
}
