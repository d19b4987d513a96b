"""A toy family outside the package: a coin that calls a fixed set of labels with a bias."""
