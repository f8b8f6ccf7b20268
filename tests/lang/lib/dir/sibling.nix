"sibling"
