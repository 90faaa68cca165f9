// Beat 8: recall cards. The answer stays hidden until the reader taps, clicks or presses Enter on
// the card's button (aria-expanded / aria-controls). A mouse resting on a card for a moment peeks
// at the answer; leaving closes a peek, and a click pins it open.

const PEEK_DELAY_MS = 450;

function setupCard(card) {
  const button = card.querySelector('button[aria-controls]');
  const answer = document.getElementById(button.getAttribute('aria-controls'));
  let mode = 'closed'; // closed | peek | pinned
  let timer = 0;
  const show = (next) => {
    mode = next;
    const open = mode !== 'closed';
    button.setAttribute('aria-expanded', String(open));
    answer.hidden = !open;
    card.dataset.state = mode;
  };
  button.addEventListener('click', () => {
    clearTimeout(timer);
    show(mode === 'pinned' ? 'closed' : 'pinned');
  });
  card.addEventListener('pointerenter', (e) => {
    if (e.pointerType !== 'mouse' || mode !== 'closed') return;
    timer = setTimeout(() => mode === 'closed' && show('peek'), PEEK_DELAY_MS);
  });
  card.addEventListener('pointerleave', () => {
    clearTimeout(timer);
    if (mode === 'peek') show('closed');
  });
  show('closed');
}

export function setup() {
  for (const card of document.querySelectorAll('[data-recall]')) setupCard(card);
}
