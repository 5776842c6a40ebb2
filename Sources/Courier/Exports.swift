@_exported import CourierCore
