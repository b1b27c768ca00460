"""What every process runs on: atomic files, paths, progress bars, memory, devices, Lightning guards, curves."""
