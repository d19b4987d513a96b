"""The paper sweep rehearsed offline: `xlt rehearse` derives, from a paper-scale config, one
that keeps the sweep (families, axes, languages, splits, columns, statistics, report, the job
graph) and swaps only what cannot run here: hub models become tiny random-init models of the
same architecture and depth, hub datasets and local corpora become generated data of the same
languages, splits, columns and label names, and training is capped at a few steps.

The stand-ins are written where a cluster's prefetched cache would be (`resources/hf` under the
rehearsal's working directory, in the Hugging Face hub and datasets cache layouts, under the real
hub ids), so `source: hub` / `source: hf` loading, `xlt prefetch --check` and the offline cache
check run exactly as they would with HF_HUB_OFFLINE=1 on a cluster.
"""
