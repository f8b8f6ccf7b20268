[ ("a" + "b" + "c") ("x" + (if true then "y" else "z")) ]
