# This file holds only a comment: there is no expression to evaluate.
