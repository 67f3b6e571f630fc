"""A call's messages and answers: content blocks, text checks, what an API takes, answers,
structured answers, and the wire formats `lowtide serve` speaks.
"""
