"""The self-test: libmpiguide-inject as a campaign uses it, and the false-alarm rate and power
measured from identical and slowed copies.
"""
