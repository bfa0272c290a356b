module memwatch.test/hot

go 1.19
