# a variable missing in the inner with is looked up in the outer with
with { outer = "o"; }; with { inner = "i"; }; [ inner outer ]
