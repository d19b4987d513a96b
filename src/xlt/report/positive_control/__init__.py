"""The demo's positive control: checks (`checks`), its job (`plan`) and verb (`commands`)."""
