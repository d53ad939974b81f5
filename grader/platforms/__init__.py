"""Every judge or course platform, one module each: its result format and its export.
May import maintain/ and everything below it.
"""
