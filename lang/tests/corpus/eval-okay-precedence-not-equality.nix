[ (!true == false) (! (1 == 2)) (!false == true) ]
