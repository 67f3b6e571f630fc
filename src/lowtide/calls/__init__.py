"""The parts of an actor's calls (a prompt, many at once, their checks, requests and templates, the
actor's providers, parked work), below `lowtide.Actor` and below bulk runs.
"""
