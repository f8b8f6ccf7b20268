[ (!true) (!false) (!!true) (! (1 == 2)) ]
