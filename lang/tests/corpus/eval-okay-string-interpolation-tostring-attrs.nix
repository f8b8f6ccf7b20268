# interpolating an attribute set uses __toString or outPath
[ "${{ outPath = "out-path"; }}" "${{ __toString = self: "to-string ${self.v}"; v = "x"; }}" "pre-${{ outPath = "p"; }}-post" ]
