"""The app's screens: annotate (main), queue, statistics, help, comment."""
