"""Where the freeze-depth family's shared prefix store is configured and which job writes it: the
names its checks' messages give (xlt.frozen_prefix.prefix_store)."""

# the config section of its shared prefix store (xlt.frozen_prefix.prefix_store)
STORE_SETTINGS = "freeze_depth.prefix_states"
STORE_RERUN = "`xlt prefix-states` (snakemake --forcerun prefix_states)"  # the job that writes the store
