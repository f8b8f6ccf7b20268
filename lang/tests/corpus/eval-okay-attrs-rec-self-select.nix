(rec { a = 5; b = a * 2; }).b
