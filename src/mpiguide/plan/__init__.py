"""What the kernel can run and which experiments a campaign asks for: the operation table,
`where:` filters, grid.csv and each run's shuffled kernel input.
"""
