module memwatch.test/loop

go 1.19
