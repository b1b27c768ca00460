"""What every process runs on: atomic files, the repository's paths, progress bars, memory release, devices and
precision, Lightning guards, the params' error (``errors.ParamError``), learning curves as CSV (``curves``)."""
