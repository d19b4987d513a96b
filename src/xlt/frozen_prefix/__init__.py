"""The frozen-prefix cache (prefix_cache: states of the frozen layers, computed once; cached_top:
the layers above them trained on those states), its shared store across a sweep (prefix_store)
and what a plan asks of them (store_plan). Only the families that cache a frozen prefix import it."""
