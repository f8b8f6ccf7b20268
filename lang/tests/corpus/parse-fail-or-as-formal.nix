# expect: syntax error
({ or }: 1)
