# Results files of `dpmu run` as tidy data frames (docs/results-schema.md, "Tidy tables"): the table
# `dpmu export` writes. With the `dpmu` command found, it reads the file (one implementation of the
# summaries, dpmu/runtime/tidy.hpp); without it (an R-only user), the package reads the summaries
# and replicates that the file stores with hdf5r (Suggests) and arranges them in the same columns.

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

# The command if one is found ("" otherwise), without an error.
dpmu_command_or_empty <- function() tryCatch(dpmu_command(""), error = function(e) "")

# Which reader: "cli" (dpmu export), "hdf5r", or "auto" (the command if found, else hdf5r).
dpmu_reader <- function(engine, caller) {
  engine <- match.arg(engine, c("auto", "cli", "hdf5r"))
  if (engine == "auto") engine <- if (nzchar(dpmu_command_or_empty())) "cli" else "hdf5r"
  if (engine == "hdf5r" && !requireNamespace("hdf5r", quietly = TRUE)) {
    stop(caller, ": reading a results file needs the dpmu command (`dpmu export`) or the R package hdf5r; neither ",
         "was found: install.packages(\"hdf5r\") (Debian: apt-get install r-cran-hdf5r), or set ",
         "options(dpmu.exe = \"/path/to/dpmu\")", call. = FALSE)
  }
  engine
}

#' Summaries of a results file: one row per cell x metric x component.
#'
#' See man/read_results.Rd.
#' @export
read_results <- function(path, engine = c("auto", "cli", "hdf5r")) {
  caller <- "dpmu::read_results"
  path <- path.expand(path)
  if (!file.exists(path)) stop(caller, ": no file '", path, "'", call. = FALSE)
  if (dpmu_reader(engine, caller) == "hdf5r") return(dpmu_h5_tidy(path, FALSE, "", caller))
  t <- dpmu_export(shQuote(path), caller)
  t$component_label[is.na(t$component_label)] <- ""
  t
}

#' Replicate values of one metric (all metrics when metric = ""): one row per cell x replicate x component.
#'
#' See man/read_replicates.Rd.
#' @export
read_replicates <- function(path, metric = "", engine = c("auto", "cli", "hdf5r")) {
  caller <- "dpmu::read_replicates"
  path <- path.expand(path)
  if (!file.exists(path)) stop(caller, ": no file '", path, "'", call. = FALSE)
  if (dpmu_reader(engine, caller) == "hdf5r") return(dpmu_h5_tidy(path, TRUE, metric, caller))
  args <- c(shQuote(path), "--replicates", if (nzchar(metric)) c("--metric", shQuote(metric)))
  t <- dpmu_export(args, caller)
  t$component_label[is.na(t$component_label)] <- ""
  t
}

# The tidy tables of a results file of schema 2.x read with hdf5r (docs/results-schema.md, "Groups
# and datasets"): the summaries /summary/<metric>/* (replicates = FALSE) or the values
# /replicates/<metric> of the done replicates (replicates = TRUE), with the cell parameters
# /cells/<p>, the labels /component_labels/<metric> and the sizes /metric_sizes/<metric>. hdf5r
# reverses the axes: a dataset [C, K] reads as a K x C matrix, [C, R, K] as a K x R x C array.
dpmu_h5_tidy <- function(path, replicates, metric, caller) {
  f <- tryCatch(hdf5r::H5File$new(path, "r"), error = function(e) {
    stop(caller, ": '", path, "' is not an HDF5 file (", conditionMessage(e), ")", call. = FALSE)
  })
  on.exit(f$close_all())
  a <- hdf5r::h5attributes(f)
  if (!identical(a$filetype, "dpmu-results")) stop(caller, ": '", path, "' is not a dpmu results file", call. = FALSE)
  version <- as.integer(a$schema_version)
  if (version[1] != 2L) {
    stop(caller, ": '", path, "' has schema version ", paste(version, collapse = "."), "; without the dpmu command ",
         "this package reads schema 2.x (files of dpmu since 2026-11); read it with `dpmu export`", call. = FALSE)
  }
  read <- function(name) {
    v <- f[[name]]$read()
    if (inherits(v, "integer64")) {
      missing <- as.character(v) == "-9223372036854775808"
      v <- as.double(v)
      v[missing] <- NA
      if (all(is.na(v) | abs(v) <= .Machine$integer.max)) v <- as.integer(v)
    }
    v
  }
  keys <- read("cells/cell_key")
  ncell <- length(keys)
  params <- as.character(unlist(a$parameters))
  cells <- list(cell_key = keys)
  for (p in params) {
    v <- read(paste0("cells/", p))
    if (is.character(v)) v[v == "NA"] <- NA_character_
    if (is.double(v)) v[is.nan(v)] <- NA_real_
    cells[[p]] <- v
  }
  metrics <- as.character(unlist(a$metrics))
  if (nzchar(metric)) {
    if (!(metric %in% metrics)) {
      stop(caller, ": the file has no metric '", metric, "'; its metrics: ", paste(metrics, collapse = ", "),
           call. = FALSE)
    }
    metrics <- metric
  }
  # For each metric: its components per cell (labels "" for a scalar metric), as a K x C matrix.
  shape <- lapply(metrics, function(m) {
    vec <- f$exists(paste0("component_labels/", m))
    if (!vec) return(list(vector = FALSE, size = rep(1L, ncell), labels = matrix("", 1L, ncell)))
    labels <- read(paste0("component_labels/", m))
    if (!is.matrix(labels)) labels <- matrix(labels, ncol = ncell)
    list(vector = TRUE, size = as.integer(read(paste0("metric_sizes/", m))), labels = labels)
  })
  names(shape) <- metrics
  as_kc <- function(v, sh) if (sh$vector) (if (is.matrix(v)) v else matrix(v, ncol = ncell)) else matrix(v, nrow = 1L)
  if (!replicates) {
    stats <- c("mean", "sd", "mcse", "q025", "q250", "q500", "q750", "q975", "n_ok", "n_nan")
    data <- lapply(metrics, function(m) lapply(stats, function(st) as_kc(read(paste0("summary/", m, "/", st)),
                                                                       shape[[m]])))
    names(data) <- metrics
    cell <- integer(); met <- character(); comp <- integer()
    for (c in seq_len(ncell)) {
      for (m in metrics) {
        k <- shape[[m]]$size[c]
        if (k < 1) next
        cell <- c(cell, rep(c, k)); met <- c(met, rep(m, k)); comp <- c(comp, seq_len(k) - 1L)
      }
    }
    out <- lapply(cells, function(v) v[cell])
    out$metric <- met
    out$component <- comp
    label <- character(length(cell))
    values <- matrix(NA_real_, length(cell), length(stats))
    for (m in metrics) {
      i <- which(met == m)
      idx <- cbind(comp[i] + 1L, cell[i])
      label[i] <- shape[[m]]$labels[idx]
      for (j in seq_along(stats)) values[i, j] <- data[[m]][[j]][idx]
    }
    out$component_label <- label
    for (j in seq_along(stats)) {
      v <- values[, j]
      v[is.nan(v)] <- NA_real_
      out[[stats[j]]] <- if (stats[j] %in% c("n_ok", "n_nan")) as.integer(v) else v
    }
    return(dpmu_csv_types(as.data.frame(out, stringsAsFactors = FALSE, check.names = FALSE)))
  }
  done <- read("replicates_done")  # R x C
  if (!is.matrix(done)) done <- matrix(done, ncol = ncell)
  vals <- lapply(metrics, function(m) read(paste0("replicates/", m)))
  names(vals) <- metrics
  cell <- integer(); rep_ <- integer(); met <- character(); comp <- integer(); value <- double(); label <- character()
  for (c in seq_len(ncell)) {
    for (r in which(done[, c] != 0)) {
      for (m in metrics) {
        k <- shape[[m]]$size[c]
        if (k < 1) next
        v <- vals[[m]]
        x <- if (shape[[m]]$vector) v[seq_len(k), r, c] else (if (is.matrix(v)) v[r, c] else v[c])
        cell <- c(cell, rep(c, k)); rep_ <- c(rep_, rep(r - 1L, k)); met <- c(met, rep(m, k))
        comp <- c(comp, seq_len(k) - 1L); value <- c(value, x); label <- c(label, shape[[m]]$labels[seq_len(k), c])
      }
    }
  }
  out <- lapply(cells, function(v) v[cell])
  out$replicate <- rep_
  out$metric <- met
  out$component <- comp
  out$component_label <- label
  value[is.nan(value)] <- NA_real_
  out$value <- value
  dpmu_csv_types(as.data.frame(out, stringsAsFactors = FALSE, check.names = FALSE))
}

# The column types read.csv gives the table of `dpmu export` (so that both engines return the same
# data frame): a numeric column whose values are all whole numbers in int range is integer (the
# CSV writes them without a decimal point), an all-missing column logical, a string column that
# reads as numbers numeric; cell_key, metric and component_label stay strings.
dpmu_csv_types <- function(t) {
  for (name in setdiff(names(t), c("cell_key", "metric", "component_label"))) {
    v <- t[[name]]
    if (all(is.na(v))) {
      t[[name]] <- rep(NA, length(v))
    } else if (is.double(v)) {
      if (all(is.na(v) | (is.finite(v) & v == round(v) & abs(v) <= .Machine$integer.max))) t[[name]] <- as.integer(v)
    } else if (is.character(v)) {
      t[[name]] <- utils::type.convert(v, as.is = TRUE, na.strings = "NA")
    }
  }
  t
}
