# expect: 'tail' called on an empty list
builtins.tail [ ]
