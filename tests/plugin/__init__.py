"""The pytest plugin: collection, options, suite files, progress, shards."""
