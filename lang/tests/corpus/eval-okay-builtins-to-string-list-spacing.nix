[ (toString [ "a" [ ] "b" ]) (toString [ [ ] "a" ]) (toString [ null null ]) (toString [ "" ]) (toString [ [ [ ] ] ]) ]
