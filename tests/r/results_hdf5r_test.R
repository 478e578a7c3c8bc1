# A results file read from R with hdf5r and `dpmu export` read with read.csv (docs/results-schema.md,
# "Reading from R"): h5attributes() works, every dataset reads, strings are UTF-8, cell_key
# round-trips (equals `dpmu summarize`), and the tidy CSV has the documented columns and numbers.
# Run by tests/e2e/r_hdf5r_test.sh: Rscript results_hdf5r_test.R RESULTS.h5 SUMMARY.json SUMMARIES.csv
#   REPLICATES.csv
suppressPackageStartupMessages({
  library(hdf5r)
  library(jsonlite)
})
args <- commandArgs(trailingOnly = TRUE)
failures <- 0L
check <- function(ok, what) {
  if (!isTRUE(ok)) {
    cat("FAIL:", what, "\n")
    failures <<- failures + 1L
  }
}
utf8 <- function(x) enc2utf8(x)


f <- H5File$new(args[1], "r")
a <- tryCatch(h5attributes(f), error = function(e) conditionMessage(e))
check(is.list(a), paste("h5attributes() fails:", a))
if (is.list(a)) {
  check(identical(a$filetype, "dpmu-results"), "filetype")
  check(identical(as.integer(a$schema_version), c(2L, 1L)), "schema_version")
  check(identical(charToRaw(utf8(a$description)), charToRaw(utf8("export test (PB \u00a74.4)"))),
        paste("description with \u00a7:", a$description))
  check(grepl("\u00a7", a$config_yaml, fixed = TRUE), "config_yaml holds \u00a7")
}
# every dataset (and every dataset's attributes) reads without an error
for (name in f$ls(recursive = TRUE)$name) {
  obj <- f[[name]]
  if (inherits(obj, "H5D")) {
    r <- tryCatch({ obj$read(); h5attributes(obj); "ok" }, error = function(e) conditionMessage(e))
    check(identical(r, "ok"), paste("reading", name, ":", r))
  }
}
check(identical(length(f[["errors/message"]][]), 0L), "/errors/message (empty) reads as character(0)")

s <- fromJSON(args[2], simplifyVector = FALSE)
keys <- f[["cells/cell_key"]][]
check(identical(keys, vapply(s, function(c) c$cell_key, "")), "cell_key equals dpmu summarize's")
check(all(grepl("^[0-9a-f]{16}$", keys)), "cell_key: 16 lowercase hex digits")
test <- f[["cells/test"]][]
check(identical(charToRaw(utf8(test[1])), charToRaw(utf8("H\u00a71, \"quoted\""))), paste("cells/test:", test[1]))

t <- read.csv(args[3], encoding = "UTF-8", stringsAsFactors = FALSE, na.strings = "NA")
want <- c("cell_key", a$parameters, "metric", "component", "component_label", "mean", "sd", "mcse", "q025", "q250",
          "q500", "q750", "q975", "n_ok", "n_nan")
check(identical(names(t), want), paste("summary columns:", paste(names(t), collapse = ",")))
check(is.integer(t$component) && is.integer(t$n_ok) && is.numeric(t$mean), "column types")
check(identical(utf8(t$test[1]), utf8("H\u00a71, \"quoted\"")), paste("test column:", t$test[1]))
# numbers equal summarize's and the file's /summary (scalar metric)
nan_cells <- 0
for (i in seq_along(s)) {
  cell <- s[[i]]
  row <- t[t$cell_key == cell$cell_key & t$metric == "log_statistic", ]
  check(nrow(row) == 1 && row$mean == cell$metrics$log_statistic$mean && row$q500 == cell$metrics$log_statistic$q500 &&
        row$n_ok == cell$metrics$log_statistic$n_ok, paste("summary of cell", cell$cell_key))
  rc <- t[t$cell_key == cell$cell_key & t$metric == "reject_corrected", ]
  check(identical(rc$component_label, c("alpha=0.05", "alpha=0.01")), "component labels")
  json_mean <- function(name) { x <- cell$metrics[[name]]$mean; if (is.null(x)) NA_real_ else x }  # null = NaN
  check(identical(rc$mean, c(json_mean("reject_corrected[0]"), json_mean("reject_corrected[1]"))),
        paste("vector summary of cell", cell$cell_key))
  nan_cells <- nan_cells + is.na(rc$mean[1])
}
check(nan_cells == 2, "NaN summaries (reject_corrected under the g-prior) read as NA")
check(identical(t[t$metric == "log_statistic", "mean"], f[["summary/log_statistic/mean"]][]), "CSV mean = /summary mean")

r <- read.csv(args[4], encoding = "UTF-8", stringsAsFactors = FALSE, na.strings = "NA")
check(identical(names(r), c("cell_key", a$parameters, "replicate", "metric", "component", "component_label", "value")),
      "replicate columns")
ls <- r[r$metric == "log_statistic", ]
v <- f[["replicates/log_statistic"]][, ]  # hdf5r reverses the axes: [R, C] for the file's [C, R]
for (i in seq_len(nrow(ls))) {
  c <- match(ls$cell_key[i], keys)
  check(identical(ls$value[i], v[ls$replicate[i] + 1, c]), paste("replicate value", i))
}
f$close_all()
cat("results_hdf5r_test:", if (failures == 0L) "passed" else paste(failures, "failed"), "\n")
quit(status = if (failures == 0L) 0L else 1L)
