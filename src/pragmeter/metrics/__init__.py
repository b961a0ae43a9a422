"""Metrics, one implementation each, every figure with a signature string where it goes into results.

- ``classification``: accuracy, confusion matrix (invalid answers a column of their own), P/R/F1, macro-F1
- ``intervals``: Wilson, percentile bootstrap, Welch and paired-t intervals, mean ± SD over runs
- ``correlation``: Pearson, Kendall τ, Spearman ρ, logistic trend slope
- ``summary``: distribution summaries and histograms
- ``bertscore``: BERTScore with a local encoder, offline
- ``overlap``: word sets and their Jaccard index (copy and near-copy checks of generated text)
"""
