"""A real small model for the bench and CI: pinned weights, llama.cpp's server, and the runs that use it."""
