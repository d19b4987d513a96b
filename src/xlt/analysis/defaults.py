"""The bootstrap's defaults (config `statistics`, the verbs' flags), free of numpy so that the
flags' declarations can name them."""

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95
