/// What sysfs says of one network interface, and the kind Courier makes of it. Pure, so the
/// rules are tested on recorded data without the hardware.
package struct InterfaceFacts: Sendable, Equatable {
    package var name: String
    /// `/sys/class/net/<name>/type`: the ARPHRD_* link type (1 Ethernet, 512 PPP, 65534 none).
    package var linkType: Int
    /// `/sys/class/net/<name>/wireless` exists (or `phy80211`).
    package var isWireless: Bool
    /// `DEVTYPE=` from the interface's `uevent` ("wlan", "wwan", "bridge", "vlan"...; "" if none).
    package var deviceType: String
    /// The driver's name (the `device/driver` link's last component; "" for virtual devices).
    package var driver: String
    /// `/sys/class/net/<name>/operstate` ("up", "down", "unknown", "dormant", ...).
    package var operationalState: String

    package init(name: String, linkType: Int = 1, isWireless: Bool = false, deviceType: String = "", driver: String = "",
                 operationalState: String = "up") {
        self.name = name
        self.linkType = linkType
        self.isWireless = isWireless
        self.deviceType = deviceType
        self.driver = driver
        self.operationalState = operationalState
    }

    /// Drivers of USB and PCIe modems (QMI, MBIM, NCM, Qualcomm's rmnet, MediaTek's ccmni,
    /// Huawei's and Sierra's) and the names such interfaces get.
    static let modemDrivers: Set<String> = ["qmi_wwan", "cdc_mbim", "huawei_cdc_ncm", "sierra_net", "rmnet", "rmnet_ipa",
                                            "ccmni", "mhi_net", "mhi_wwan_mbim", "ipa", "option", "cdc_ether_wwan"]
    static let modemNamePrefixes = ["wwan", "rmnet", "ccmni", "usb_wwan", "mbim"]
    static let wifiNamePrefixes = ["wlan", "wlp", "wlx", "wifi"]
    static let pppLinkType = 512

    /// Whether the interface carries traffic now (`unknown` is what tunnels and many virtual
    /// devices report while working).
    package var isUp: Bool { operationalState == "up" || operationalState == "unknown" }

    /// The kind of network this interface is.
    package var kind: NetworkKind {
        if isWireless || deviceType == "wlan" { return .wifi }
        if deviceType == "wwan" || Self.modemDrivers.contains(driver) || linkType == Self.pppLinkType
            || Self.modemNamePrefixes.contains(where: name.hasPrefix) { return .cellular }
        if Self.wifiNamePrefixes.contains(where: name.hasPrefix) { return .wifi }
        return .wired
    }
}
