"""The corpus builder: text -> AMR -> re-focused AMRs -> candidates -> scores -> shards."""
