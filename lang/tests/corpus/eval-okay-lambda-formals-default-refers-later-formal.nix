let f = { x ? y + 1, y ? 5 }: [ x y ]; in [ (f { }) (f { y = 1; }) ]
