"""What several test folders share: running the workflow (workflow_runs), a bag-of-words BERT
(bag_of_words) and a toy resumable training loop (toy_training, also run as a script)."""
