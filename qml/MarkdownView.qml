import QtQuick
import QtQuick.Controls
import Strata.Core

// A message's answer: frozen blocks (each laid out once) and the open tail, the only part that
// changes while the reply streams.
Column {
    id: view
    property MarkdownBlocks blocks
    property var chat
    spacing: 10

    component Block: Item {
        id: block
        property string source
        property bool code
        property string language
        width: view.width
        implicitHeight: content.item ? content.item.implicitHeight : 0
        // Prose is one Text; only a code block gets the box with its header, copy button and
        // editor. (Creating those, hidden, for every paragraph made each block that froze while a
        // reply streamed cost a few milliseconds of the GUI thread.)
        Loader {
            id: content
            width: parent.width
            sourceComponent: block.code ? codeBox : prose
        }
        Component {
            id: prose
            Text {
                text: block.source
                textFormat: Text.MarkdownText
                wrapMode: Text.Wrap
                color: Theme.text
                linkColor: Theme.accent
                font.pixelSize: Theme.fontSize
                onLinkActivated: (link) => Qt.openUrlExternally(link)
            }
        }
        Component {
            id: codeBox
            Rectangle {
                implicitHeight: codeText.implicitHeight + header.height + 20
                radius: Theme.radius
                color: Theme.code
                border.color: Theme.border
                Row {
                    id: header
                    x: 10; y: 6
                    width: parent.width - 20
                    height: 22
                    Label {
                        width: parent.width - copyCode.width
                        anchors.verticalCenter: parent.verticalCenter
                        text: block.language.length ? block.language : qsTr("code")
                        color: Theme.textDim
                        font.pixelSize: 12
                    }
                    Button {
                        id: copyCode
                        text: qsTr("Copy")
                        flat: true
                        font.pixelSize: 12
                        height: 22
                        Accessible.name: qsTr("Copy the code")
                        onClicked: view.chat.copyText(block.source)
                    }
                }
                TextEdit {
                    id: codeText
                    objectName: "codeText"
                    x: 10
                    y: header.y + header.height + 4
                    width: parent.width - 20
                    text: block.source
                    textFormat: TextEdit.PlainText
                    wrapMode: TextEdit.WrapAnywhere
                    readOnly: true
                    selectByMouse: true
                    activeFocusOnPress: false
                    font.family: Theme.mono
                    font.pixelSize: 13
                    color: Theme.codeText
                    selectionColor: Theme.accent
                    selectedTextColor: Theme.accentText
                }
                CodeHighlight {
                    document: codeText.textDocument
                    language: block.language
                    keywordColor: Theme.codeKeyword
                    stringColor: Theme.codeString
                    numberColor: Theme.codeNumber
                    commentColor: Theme.codeComment
                    typeColor: Theme.codeType
                    functionColor: Theme.codeFunction
                }
            }
        }
    }

    Repeater {
        model: view.blocks
        delegate: Block {
            source: model.text
            code: model.code
            language: model.language
        }
    }
    Block {
        source: view.blocks ? view.blocks.tail : ""
        code: view.blocks ? view.blocks.tailIsCode : false
        language: view.blocks ? view.blocks.tailLanguage : ""
        visible: source.length > 0
    }
}
