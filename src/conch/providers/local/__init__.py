"""providers/local"""
