# a set with an outPath attribute is printed as its outPath
{ outPath = "the-out-path"; other = 1; }
