# inside with, an unknown variable is only an error when evaluated
with { }; if true then "fine" else undefinedVariable
