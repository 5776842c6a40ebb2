module courier.test/interop

go 1.19
