"""xlt: cross-lingual transfer experiments around multilingual encoders."""

__version__ = "0.1.0"
