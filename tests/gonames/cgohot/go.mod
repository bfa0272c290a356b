module memwatch.test/cgohot

go 1.19
