"""What a config will cost before it runs (`xlt plan`) and what this machine can do (`xlt calibrate`)."""
