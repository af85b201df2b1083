#!/usr/bin/env Rscript
# lme4 reference fits for src/stats mixedModel / varianceDecomposition.
# Called by tools/golden/mixed_model.py:  Rscript mixed_model.R <in-dir> <out.json>
# <in-dir> holds one CSV per case (columns y, level, group; level may be absent)
# and cases.csv (name, reference, method). Writes one JSON object per case.
suppressPackageStartupMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
in_dir <- args[[1]]
out_file <- args[[2]]
cases <- read.csv(file.path(in_dir, "cases.csv"), stringsAsFactors = FALSE)
# Tight optimiser tolerances so the reference is limited by the model, not by bobyqa's stopping rule.
control <- lmerControl(optimizer = "bobyqa", optCtrl = list(rhobeg = 0.2, rhoend = 1e-12, maxfun = 1e5),
                       check.conv.singular = "ignore")
num <- function(x) sprintf("%.17g", x)
quote <- function(s) paste0('"', gsub('"', '\\\\"', s), '"')
entries <- character(0)
for (i in seq_len(nrow(cases))) {
  name <- cases$name[i]
  data <- read.csv(file.path(in_dir, paste0(name, ".csv")), stringsAsFactors = FALSE,
                   colClasses = c(group = "character"))
  reml <- cases$method[i] == "REML"
  if (cases$reference[i] == "") {
    fit <- lmer(y ~ 1 + (1 | group), data = data, REML = reml, control = control)
  } else {
    data$level <- relevel(factor(data$level), ref = cases$reference[i])
    fit <- lmer(y ~ level + (1 | group), data = data, REML = reml, control = control)
  }
  beta <- fixef(fit)
  se <- sqrt(diag(as.matrix(vcov(fit))))
  terms <- sub("^level", "", names(beta))
  vc <- as.data.frame(VarCorr(fit))
  fixed <- paste0("{", "\"term\":", quote(terms), ",\"estimate\":", num(beta), ",\"se\":", num(se), "}",
                  collapse = ",")
  entries <- c(entries, paste0(
    quote(name), ":{\"fixed\":[", fixed, "],",
    "\"groupVariance\":", num(vc$vcov[vc$grp == "group"]), ",",
    "\"residualVariance\":", num(vc$vcov[vc$grp == "Residual"]), ",",
    "\"logLik\":", num(as.numeric(logLik(fit))), ",",
    "\"singular\":", if (isSingular(fit)) "true" else "false", "}"))
}
writeLines(paste0("{\"lme4\":", quote(as.character(packageVersion("lme4"))),
                  ",\"R\":", quote(paste(R.version$major, R.version$minor, sep = ".")),
                  ",\"fits\":{", paste(entries, collapse = ","), "}}"), out_file)
