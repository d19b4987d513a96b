"""What several test folders share: running the workflow (workflow_runs), a bag-of-words BERT
(bag_of_words), a toy resumable training loop (toy_training, also run as a script), a job server
for a test's own `xlt` subprocesses (job_server), a family kept outside the package
(family_folders: the walk-through family of docs/architecture.md), the xdist worker groups (worker_groups) and
the numerics tests' derived tolerances (numerics)."""
